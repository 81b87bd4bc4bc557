/** BLOB_URL / blobs.url: where blobs live, with every mistake named; credentials never shown in the summary. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, describeConfig, loadConfig } from '../../src/config/load.js';
import { tempDir } from '../helpers/databases.js';

function load(env: Record<string, string>, yaml?: string) {
  const dir = tempDir('sluice-blob-config-');
  if (yaml !== undefined) {
    writeFileSync(path.join(dir, 'sluice.yaml'), yaml);
  }
  return loadConfig(env, dir);
}

function problemsOf(env: Record<string, string>, yaml?: string): string[] {
  try {
    load(env, yaml);
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

describe('blob storage config', () => {
  it('defaults to local disk under the data directory', () => {
    const config = load({ DATA_DIR: '/srv/sluice' });
    expect(config.blobs).toEqual({ kind: 'local', root: '/srv/sluice/blobs' });
  });

  it('BLOB_URL names a bucket, prefix, endpoint, region and path style; credentials from the AWS variables', () => {
    const config = load({
      BLOB_URL: 's3://sluice-files/prod/blobs/?endpoint=http://minio:9000/&region=eu-west-1&force_path_style=true',
      AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'very-secret',
    });
    expect(config.blobs).toEqual({
      kind: 's3',
      bucket: 'sluice-files',
      prefix: 'prod/blobs',
      endpoint: 'http://minio:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'very-secret' },
    });
    const summary = JSON.stringify(describeConfig(config));
    expect(summary).toContain('s3://sluice-files/prod/blobs at http://minio:9000');
    expect(summary).not.toContain('very-secret');
    expect(summary).not.toContain('AKIAEXAMPLE');
  });

  it('AWS S3 itself: no endpoint, virtual-hosted style, region from AWS_REGION, the SDK default credential chain', () => {
    const config = load({ BLOB_URL: 's3://sluice-files', AWS_REGION: 'ap-south-1' });
    expect(config.blobs).toEqual({
      kind: 's3',
      bucket: 'sluice-files',
      prefix: '',
      endpoint: null,
      region: 'ap-south-1',
      forcePathStyle: false,
      credentials: null,
    });
  });

  it('YAML blobs.url with credentials in the file; BLOB_URL wins over it', () => {
    const yaml = 'blobs:\n  url: s3://from-yaml/x?endpoint=https://r2.example.com&region=auto\n  access_key_id: id1\n  secret_access_key: secret1\n';
    const fromFile = load({}, yaml);
    expect(fromFile.blobs).toMatchObject({ kind: 's3', bucket: 'from-yaml', prefix: 'x', region: 'auto', forcePathStyle: true });
    expect(fromFile.blobs.kind === 's3' && fromFile.blobs.credentials).toEqual({ accessKeyId: 'id1', secretAccessKey: 'secret1' });
    expect(load({ BLOB_URL: 's3://from-env' }, yaml).blobs).toMatchObject({ bucket: 'from-env' });
  });

  it.each([
    ['s3://B_ad', ['BLOB_URL: "B_ad" is not a valid bucket name (3–63 lower-case letters, digits, dots, hyphens)']],
    ['gs://bucket', ['BLOB_URL: must start with s3:// (local disk is the default when unset)']],
    ['s3://bucket?endpoint=minio:9000', ['BLOB_URL: endpoint must be an http:// or https:// URL']],
    ['s3://bucket?force_path_style=yes', ['BLOB_URL: force_path_style must be true or false']],
    ['s3://bucket?regoin=x', ['BLOB_URL: unknown parameter "regoin" (known: endpoint, region, force_path_style)']],
  ])('BLOB_URL=%s is refused', (url, problems) => {
    expect(problemsOf({ BLOB_URL: url })).toEqual(problems);
  });

  it('half a credential pair is refused', () => {
    expect(problemsOf({ BLOB_URL: 's3://bucket', AWS_ACCESS_KEY_ID: 'id' })).toEqual([
      'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together',
    ]);
    expect(problemsOf({}, 'blobs:\n  url: s3://bucket\n  secret_access_key: s\n')).toEqual([
      'blobs: access_key_id and secret_access_key must be given together',
    ]);
    expect(problemsOf({}, 'blobs:\n  url: http://bucket\n')[0]).toMatch(/^blobs\.url: /);
  });
});
