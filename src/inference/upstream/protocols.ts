/**
 * The upstream protocols this build speaks: the names sluice.yaml's `upstream.protocol`
 * may give. Add a protocol with its folder under protocols/ and one line here.
 */
import type { UpstreamProtocolEntry } from './protocol.js';
import { bedrockProtocol } from './protocols/bedrock/index.js';
import { openaiProtocol } from './protocols/openai/index.js';

export const UPSTREAM_PROTOCOLS: readonly UpstreamProtocolEntry[] = [openaiProtocol, bedrockProtocol];
