/**
 * Operations of the contract whose issue has not landed yet. They answer 501 with the error body,
 * and the README's status table lists them (a test keeps the two in step).
 */
import type { OperationId } from '../../../generated/operations.js';
import { errors } from '../../errors.js';
import type { Handlers } from '../handler-types.js';

export const NOT_YET_IMPLEMENTED = {} as const satisfies Partial<Record<OperationId, number>>;

type NotYet = keyof typeof NOT_YET_IMPLEMENTED;

export const notYetImplementedHandlers = Object.fromEntries(
  Object.keys(NOT_YET_IMPLEMENTED).map((id) => [
    id,
    async () => {
      throw errors.notImplemented(id);
    },
  ]),
  // `{}` while every operation is implemented; the entries above give it its keys when one is not
  // eslint-disable-next-line @typescript-eslint/no-generated-empty-object-type -- see above
) as unknown as Handlers<NotYet>;
