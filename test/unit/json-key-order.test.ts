/**
 * keyOrderAt: the key order of one member object as the JSON text lists it, which a
 * parsed object loses for integer-like keys.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyOrderAt } from '../../src/domain/shared/json-key-order.js';

describe('keyOrderAt', () => {
  it('lists integer-like and other keys in text order, past nested values, strings with brackets and escapes', () => {
    const text = ' { "state" : {"a":[1,{"}":"]"}],"b":"\\"{"} , "questions" : { "10" : {"x":[{}]}, "b\\u0031" : "q}", "2":null , "0": 3.5e2 } , "z": true } ';
    expect(keyOrderAt(text, ['questions'])).toEqual(['10', 'b1', '2', '0']);
    expect(Object.keys(JSON.parse(text).questions)).toEqual(['0', '2', '10', 'b1']);
  });

  it('keeps a repeated inner key where it first appeared, and reads the last of a repeated member', () => {
    expect(keyOrderAt('{"questions":{"3":1,"1":2,"3":4}}', ['questions'])).toEqual(['3', '1']);
    expect(keyOrderAt('{"questions":{"9":1},"questions":{"8":1,"7":2}}', ['questions'])).toEqual(['8', '7']);
  });

  it('follows a path of members down to a nested object', () => {
    const text = '{"questions":{"9":{"type":"choice","criteria":{"10":null,"b":"x","2":null}},"8":{"criteria":[1]}}}';
    expect(keyOrderAt(text, ['questions', '9', 'criteria'])).toEqual(['10', 'b', '2']);
    expect(keyOrderAt(text, ['questions', '8', 'criteria'])).toBeNull();
    expect(keyOrderAt(text, ['questions', '7', 'criteria'])).toBeNull();
  });

  it('is null when the text is not an object or the member is absent or not an object', () => {
    expect(keyOrderAt('[1]', ['questions'])).toBeNull();
    expect(keyOrderAt('{"model":"m"}', ['questions'])).toBeNull();
    expect(keyOrderAt('{"questions":[{"a":1}]}', ['questions'])).toBeNull();
    expect(keyOrderAt('{"questions":{}}', ['questions'])).toEqual([]);
  });

  it('matches the order a generated text was written in', () => {
    const key = fc.oneof(fc.nat({ max: 1000 }).map(String), fc.string({ maxLength: 6 }));
    fc.assert(
      fc.property(fc.uniqueArray(key, { minLength: 0, maxLength: 12 }), fc.array(fc.jsonValue({ maxDepth: 3 }), { minLength: 12, maxLength: 12 }), (keys, values) => {
        const members = keys.map((k, i) => `${JSON.stringify(k)} : ${JSON.stringify(values[i])}`);
        const text = `{"state":${JSON.stringify(values[0])},"questions":{${members.join(' ,\n')}},"after":[]}`;
        expect(keyOrderAt(text, ['questions'])).toEqual(keys);
      }),
    );
  });
});
