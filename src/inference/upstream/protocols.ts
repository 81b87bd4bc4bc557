/**
 * The upstream protocols this build speaks: the names sluice.yaml's `upstream.protocol`
 * may give. Add a protocol with its folder under protocols/ and one line here. Azure
 * OpenAI speaks the OpenAI format: the openai adapter serves it with Azure's endpoint
 * (paths and auth, protocols/azure/).
 */
import type { UpstreamProtocolEntry } from './protocol.js';
import { OpenAIProtocol, openaiProtocol } from './protocols/openai/index.js';
import { azureEndpoint } from './protocols/azure/endpoint.js';
import { anthropicProtocol } from './protocols/anthropic/index.js';
import { bedrockProtocol } from './protocols/bedrock/index.js';

const azureProtocol: UpstreamProtocolEntry = { name: 'azure', create: (deps) => new OpenAIProtocol(deps, azureEndpoint) };

export const UPSTREAM_PROTOCOLS: readonly UpstreamProtocolEntry[] = [openaiProtocol, azureProtocol, anthropicProtocol, bedrockProtocol];
