/**
 * A loopback TCP port where connections are refused for the whole run: an engine that is
 * down, an unreachable Redis.
 *
 * A port taken with port 0 and released goes back to the ephemeral range, and the next
 * server a parallel test starts (or an outgoing connection's local end) can be given it:
 * in one CI run a killed engine's port answered again, as another test's server, and a
 * routing test's "dead" deployment was ready. Port 2 is below 1024, outside the range port
 * 0 draws from, and no test binds it; unlike port 1 it is not one of the Fetch standard's
 * "bad ports", which `fetch` refuses before connecting. refusedPort() checks that it
 * refuses before handing it out, so a machine where something listens there fails loudly
 * here instead of flaking in the test that uses it.
 */
import net from 'node:net';

const REFUSED_PORT = 2;

export async function refusedPort(): Promise<number> {
  const outcome = await new Promise<string>((resolve) => {
    const socket = net.connect(REFUSED_PORT, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('a connection');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  if (outcome !== 'ECONNREFUSED') throw new Error(`127.0.0.1:${REFUSED_PORT} must refuse connections for these tests, but gave ${outcome}`);
  return REFUSED_PORT;
}
