/** Tracing from the standard OTEL_* variables: off by default, on with an OTLP endpoint, refused for what is unsupported. */
import { describe, expect, it } from 'vitest';
import { resolveTracingConfig } from '../../src/config/tracing-config.js';

function resolve(env: Record<string, string>) {
  const problems: string[] = [];
  return { config: resolveTracingConfig(env, problems), problems };
}

describe('tracing config', () => {
  it('is off with no OTEL_* variables', () => {
    expect(resolve({})).toEqual({ config: { enabled: false, endpoint: null, serviceName: 'sluice', protocol: 'http/protobuf', genAi: false }, problems: [] });
  });

  it('OTEL_EXPORTER_OTLP_ENDPOINT turns it on, traces under /v1/traces; the traces endpoint is used as given', () => {
    expect(resolve({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_SERVICE_NAME: 'api' }).config).toEqual({
      enabled: true,
      endpoint: 'http://collector:4318/v1/traces',
      serviceName: 'api',
      protocol: 'http/protobuf',
      genAi: false,
    });
    expect(resolve({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://c.example/otlp/traces' }).config.endpoint).toBe('https://c.example/otlp/traces');
    expect(resolve({ OTEL_TRACES_EXPORTER: 'otlp' }).config).toMatchObject({ enabled: true, endpoint: null });
  });

  it('OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none keeps it off whatever the endpoint', () => {
    expect(resolve({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).config.enabled).toBe(false);
    expect(resolve({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).config.enabled).toBe(false);
  });

  it('refuses exporters and protocols other than OTLP over HTTP', () => {
    expect(resolve({ OTEL_TRACES_EXPORTER: 'zipkin' }).problems).toEqual(['OTEL_TRACES_EXPORTER: only "otlp" (or "none") is supported, got "zipkin"']);
    expect(resolve({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).problems).toEqual([
      'OTEL_EXPORTER_OTLP_PROTOCOL: only OTLP over HTTP is supported, "http/protobuf" (the default) or "http/json", got "grpc"',
    ]);
    expect(resolve({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/proto' }).problems).toEqual([
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: only OTLP over HTTP is supported, "http/protobuf" (the default) or "http/json", got "http/proto"',
    ]);
    expect(resolve({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }).problems).toEqual(['OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:// or https:// URL']);
  });

  it('exports in protobuf unless asked for JSON; the traces variable wins over the general one', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(resolve(on).config.protocol).toBe('http/protobuf');
    expect(resolve({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toMatchObject({ config: { protocol: 'http/json' }, problems: [] });
    expect(resolve({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }).config.protocol).toBe('http/protobuf');
    expect(resolve({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' })).toMatchObject({ config: { protocol: 'http/json' }, problems: [] });
  });

  it('OTEL_SEMCONV_STABILITY_OPT_IN with gen_ai_latest_experimental (among others) asks for the GenAI conventions; nothing else does', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(resolve({ ...on, OTEL_SEMCONV_STABILITY_OPT_IN: 'gen_ai_latest_experimental' }).config.genAi).toBe(true);
    expect(resolve({ ...on, OTEL_SEMCONV_STABILITY_OPT_IN: 'http, gen_ai_latest_experimental ,database' }).config.genAi).toBe(true);
    expect(resolve({ ...on, OTEL_SEMCONV_STABILITY_OPT_IN: 'http/dup,gen_ai' }).config.genAi).toBe(false);
    expect(resolve({ ...on, OTEL_SEMCONV_STABILITY_OPT_IN: 'gen_ai_latest_experimental_x' }).config.genAi).toBe(false);
    expect(resolve(on).config.genAi).toBe(false);
  });
});
