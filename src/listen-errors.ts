/**
 * Why the server could not take its address, as one line naming the setting to change
 * and a sysexits code, instead of Node's stack: the port is taken (69, EX_UNAVAILABLE),
 * the host is not an address of this machine (69), or the port needs privileges (77).
 */
export class ListenError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'ListenError';
  }
}

export function describeListenFailure(err: unknown, host: string, port: number): ListenError | null {
  const code = (err as { code?: unknown } | null)?.code;
  const where = `cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return new ListenError(`error: ${where}: the port is already in use by another process; set PORT to a free port (or HOST to another address)`, 69);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new ListenError(`error: ${where}: this machine has no such address; set HOST to one of its addresses (127.0.0.1, or 0.0.0.0 for all)`, 69);
    case 'EACCES':
      return new ListenError(`error: ${where}: permission denied (ports below 1024 need privileges); set PORT to 1024 or above`, 77);
    default:
      return null;
  }
}
