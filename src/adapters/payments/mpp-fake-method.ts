/**
 * The built-in `fake/charge` MPP method, for tests and demos (enabled only by config, like
 * the fake card provider): its credential carries a free-form token and settles nothing
 * real. Production deployments would configure one of mppx's own methods (tempo, stripe)
 * in its place; the rail around it is the same.
 */
import { Method, z } from 'mppx';

export const fakeCharge = Method.from({
  name: 'fake',
  intent: 'charge',
  schema: {
    credential: { payload: z.object({ token: z.string().check(z.minLength(1), z.maxLength(256)) }) },
    request: z.object({ amount: z.string(), currency: z.string() }),
  },
});
