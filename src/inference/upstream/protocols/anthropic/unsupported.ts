/**
 * What the Messages API cannot carry: refused with 400 `unsupported_parameter` naming the
 * field and the provider, or (a request field, with the model's `drop_params: true`)
 * dropped. A content part it has no block for is always refused: dropping it would
 * answer a different question.
 */
import type { ModelSpec } from '../../../../domain/models/model-spec.types.js';
import { AppError } from '../../../../domain/shared/errors.js';

export interface Unsupported {
  /** `droppable`: `drop_params: true` may drop it instead. */
  refuse(field: string, droppable?: boolean): void;
}

export class SamplingRefusals implements Unsupported {
  constructor(
    private readonly model: ModelSpec,
    private readonly provider: string,
  ) {}

  refuse(field: string, droppable = true): void {
    if (droppable && this.model.binding.dropUnsupported) return;
    const remedy = droppable ? `remove it, or set models.${this.model.id}.drop_params: true to drop what the provider cannot carry` : 'remove it';
    throw new AppError('invalid_request', `${field} is not supported by provider ${this.provider} (model ${this.model.id}); ${remedy}`, {
      code: 'unsupported_parameter',
      param: field.split(/[ .[]/)[0],
    });
  }
}
