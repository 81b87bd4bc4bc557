import { describe, expect, it } from 'vitest';
import { domainToWords, segmentWord } from '../../../src/inference/classifier/domain-words.js';

const VOCAB = new Set(['ny', 'times', 'time', 'news', 'sports', 'best', 'buy', 'car', 'cars', 'rental', 'münchen', 'wetter', 'the', 'verge', 'a', 'b']);
const hasWord = (w: string) => VOCAB.has(w);

describe('domain word splitting', () => {
  it('splits run-together words into the fewest, longest known words', () => {
    expect(segmentWord('nytimes', hasWord)).toEqual(['ny', 'times']);
    expect(segmentWord('bestbuy', hasWord)).toEqual(['best', 'buy']);
    expect(segmentWord('carsrental', hasWord)).toEqual(['cars', 'rental']);
    expect(segmentWord('theverge', hasWord)).toEqual(['the', 'verge']);
  });

  it('keeps unknown letters together and a mostly-unknown chunk whole', () => {
    expect(segmentWord('xytimes', hasWord)).toEqual(['xy', 'times']);
    expect(segmentWord('qwertyab', hasWord)).toEqual(['qwertyab']);
  });

  it('reads a bare domain, dropping www and the public suffix', () => {
    expect(domainToWords('nytimes.com', hasWord)).toBe('ny times');
    expect(domainToWords('www.bestbuy.co.uk', hasWord)).toBe('best buy');
  });

  it('reads subdomains and paths, without file suffixes or query strings', () => {
    expect(domainToWords('https://sports.nytimes.com/news/car-rental/index.html?x=1', hasWord)).toBe('sports ny times news car rental index');
    expect(domainToWords('HTTP://News.Example.org/2024/Times_News', hasWord)).toBe('news example 2024 times news');
  });

  it('decodes punycode labels', () => {
    // xn--mnchen-3ya = münchen
    expect(domainToWords('wetter.xn--mnchen-3ya.de', hasWord)).toBe('wetter münchen');
  });
});
