/**
 * Loopback TCP ports where connections are refused: an engine that is down, an unreachable
 * Redis, or an engine that a test starts later on a port it chose first.
 *
 * A port taken with port 0 and released goes back to the ephemeral range, and the next
 * server a parallel test starts (or an outgoing connection's local end) can be given it:
 * in one CI run a killed engine's port answered again, as another test's server, and a
 * routing test's "dead" deployment was ready. So neither helper draws from that range.
 *
 * refusedPort(): port 2, refused for the whole run. It is below 1024, and no test binds
 * it; unlike port 1 it is not one of the Fetch standard's "bad ports", which `fetch`
 * refuses before connecting.
 *
 * vacantPort(): a port that refuses now and that a test may listen on later. It is drawn
 * at random below Linux's ephemeral range (32768–60999 by default), where port 0 never
 * hands one out, and only a test that asked for it binds it.
 *
 * Both check that the port refuses before handing it out, so a machine where something
 * listens there fails loudly here (or draws again) instead of flaking in the test.
 */
import net from 'node:net';

const REFUSED_PORT = 2;
/** Below the ephemeral range and above the well-known services' ports the machines run. */
const VACANT_FIRST = 20_000;
const VACANT_COUNT = 10_000;
const VACANT_DRAWS = 20;

function connectOutcome(port: number): Promise<string> {
  return new Promise<string>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('a connection');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

export async function refusedPort(): Promise<number> {
  const outcome = await connectOutcome(REFUSED_PORT);
  if (outcome !== 'ECONNREFUSED') throw new Error(`127.0.0.1:${REFUSED_PORT} must refuse connections for these tests, but gave ${outcome}`);
  return REFUSED_PORT;
}

export async function vacantPort(): Promise<number> {
  for (let draw = 0; draw < VACANT_DRAWS; draw++) {
    const port = VACANT_FIRST + Math.floor(Math.random() * VACANT_COUNT);
    if ((await connectOutcome(port)) === 'ECONNREFUSED') return port;
  }
  throw new Error(`no port in ${VACANT_FIRST}–${VACANT_FIRST + VACANT_COUNT - 1} refused connections in ${VACANT_DRAWS} draws`);
}
