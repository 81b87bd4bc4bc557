/**
 * `sluice providers check` for one OpenAI-format deployment: its models list (`GET
 * {base_url}/models`, Azure's at its own path) with its auth headers, and whether the model
 * it is asked for is in it (../../models-check.ts).
 */
import type { UpstreamAttempt } from '../../protocol.js';
import { upstreamName, type HttpEndpoint } from '../../endpoint.js';
import { checkModelsList } from '../../models-check.js';

export function checkDeployment({ model, deployment }: UpstreamAttempt, endpoint: HttpEndpoint): Promise<string | null> {
  return checkModelsList({
    url: deployment.baseUrl + endpoint.modelsPath(deployment),
    headers: endpoint.headers(deployment),
    wanted: upstreamName(model, deployment),
    notFoundHint: endpoint.notFoundHint,
  });
}
