/**
 * Serves a directory on loopback in a process of its own (`node bench/serve-site.ts DIR`), printing its
 * origin: a benchmark's site then costs the measured process no CPU. Ends when its stdin closes.
 */
import { serveDirectory } from '../test/support/sites.ts';

const site = await serveDirectory(process.argv[2]!, { rewriteOrigin: false });
process.stdout.write(`${site.origin}\n`);
process.stdin.resume();
process.stdin.on('end', () => void site.close().then(() => process.exit(0)));
