/**
 * The commands that talk to a running service: where it is (--url, KB_URL, or this machine's PORT),
 * the API key (KB_API_KEY only: a key given as a flag would land in the shell's history and in `ps`),
 * and the typed client they share. They reach the service through src/client only.
 */
import type { Command } from 'commander';
import { createKbClient, type KbClient } from '../client/index.ts';
import { InvalidServiceUrl, serviceUrl as resolveServiceUrl } from '../client/service-url.ts';
import { ServiceUnreachable, UsageError } from './errors.ts';

export interface RemoteOptions {
  url?: string;
  json?: boolean;
}

export interface Remote {
  client: KbClient;
  /** The service's origin, for messages. */
  url: string;
  json: boolean;
}

/**
 * --url, else KB_URL, else the service's default address on this machine; a URL that is not one is a
 * usage error (exit code 2), like any other wrong option.
 */
export function serviceUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  try {
    return resolveServiceUrl(flag, env);
  } catch (err) {
    if (err instanceof InvalidServiceUrl) throw new UsageError(err.message);
    throw err;
  }
}

/** The client for a command's options; refuses to start without a key. */
export function connect(opts: RemoteOptions, env: NodeJS.ProcessEnv = process.env): Remote {
  const url = serviceUrl(opts.url, env);
  const apiKey = env['KB_API_KEY'];
  if (!apiKey) {
    throw new UsageError(
      'set KB_API_KEY to an API key of your organization (`kb key create <org>` prints one; the first start of `kb serve` shows the default one)',
    );
  }
  const client = createKbClient({
    baseUrl: url,
    apiKey,
    // A refused connection is a sentence about the service, not a fetch stack trace.
    fetch: (request) =>
      fetch(request).catch((err: unknown) => {
        throw new ServiceUnreachable(url, err);
      }),
  });
  return { client, url, json: opts.json === true };
}

/** Adds the options every remote command takes. */
export function remoteOptions(command: Command): Command {
  return command
    .option('--url <url>', 'the service (default: KB_URL, else http://127.0.0.1:$PORT, port 8080)')
    .option('--json', 'machine-readable output only: JSON on stdout, no bars');
}

/** A whole number option (`--limit 5`), checked. */
export function intOption(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new UsageError(`${name} must be a whole number from ${min} to ${max}, not "${value}"`);
    }
    return n;
  };
}

/** Collects a repeatable option (`--tag a --tag b`). */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Writes a JSON document (one line) to stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}
