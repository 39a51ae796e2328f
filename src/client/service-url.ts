/**
 * Where a running service is, for the programs that call it from this machine's shell (the `kb` remote
 * commands and `kb mcp`): --url, else KB_URL, else the service's default address here. One function, so
 * both read the same settings the same way. The environment is an argument, not `process.env`, so this
 * stays free of Node globals like the rest of the client.
 */

/** A service URL that is not an http(s) URL; the message says what was given and what is expected. */
export class InvalidServiceUrl extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidServiceUrl';
  }
}

/** --url, else KB_URL, else the service's default address on this machine (its PORT setting, or 8080). */
export function serviceUrl(flag: string | undefined, env: Record<string, string | undefined>): string {
  const raw = flag ?? env['KB_URL'] ?? `http://127.0.0.1:${env['PORT'] || '8080'}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidServiceUrl(`the service URL "${raw}" is not a URL (e.g. http://127.0.0.1:8080)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidServiceUrl(`the service URL must be http or https, not ${url.protocol}`);
  }
  return url.origin + url.pathname.replace(/\/+$/, '');
}
