/**
 * What `kb serve` / `./dev.sh start` print for people once the service listens: where it is, where its
 * console and docs are, on the very first start the generated API key, and the next three commands of a
 * first hour (the key, a crawl, a search). It goes to stdout beside the log lines,
 * so it must not read like one of them.
 */
import { styleText } from 'node:util';
import type { LogFormat } from './logger.ts';

interface StartInfo {
  url: string;
  storage: 'pglite' | 'postgres';
  /** Embedded mode's data directory. */
  dataDir?: string | undefined;
  /** The `default` organization's key, created on the very first start: shown once. */
  firstStartKey?: string | null | undefined;
}

/**
 * The banner's text. Beside JSON log lines (piped, production) it is plain `kb: ...` lines that a log
 * collector keeps as they are and a script can read (`kb: listening on <url>`; the key alone on the last
 * line). Beside pretty log lines (a terminal) it is a block between two heavy rules with blank lines
 * around it, the URL and the key highlighted; the key stands alone at the start of its line, so it copies
 * clean. `color` (a terminal that supports it) adds bold and colour.
 */
export function startBanner(info: StartInfo, opts: { format: LogFormat; color: boolean }): string {
  const storage = `${info.storage}${info.storage === 'pglite' && info.dataDir ? `, data: ${info.dataDir}` : ''}`;
  if (opts.format === 'json') {
    const lines = [
      `kb: listening on ${info.url} (storage: ${storage})`,
      `kb: console at ${info.url}/console`,
      `kb: API docs at ${info.url}/docs`,
    ];
    if (info.firstStartKey) {
      lines.push('kb: first start: created organization "default". Its API key (shown once, store it now):');
      lines.push(info.firstStartKey);
    }
    return `${lines.join('\n')}\n`;
  }
  const style = (format: Parameters<typeof styleText>[0], text: string) =>
    opts.color ? styleText(format, text, { validateStream: false }) : text;
  const lines = [
    `  ${style('bold', 'kb: listening on')} ${style(['bold', 'green'], info.url)}`,
    `      console   ${style('cyan', `${info.url}/console`)}`,
    `      API docs  ${style('cyan', `${info.url}/docs`)}`,
    `      storage   ${storage}`,
  ];
  if (info.firstStartKey) {
    lines.push(
      '',
      `  ${style('bold', 'First start: created organization "default". Its API key, shown once (store it now):')}`,
      '',
      style(['bold', 'yellow'], info.firstStartKey),
    );
  }
  lines.push(
    '',
    `  ${style('bold', 'Next, in another terminal:')}`,
    ...nextCommands(info).map((c) => `      ${c}`),
  );
  const rule = style('dim', '━'.repeat(72));
  return `\n${rule}\n${lines.join('\n')}\n${rule}\n\n`;
}

/**
 * The first hour's next three commands: the key for the `kb` commands, a crawl followed until its pages are
 * searchable, a search. `./dev.sh kb` because it works from a checkout whatever Node the machine has.
 */
function nextCommands(info: StartInfo): string[] {
  const url = /^http:\/\/127\.0\.0\.1:8080$/.test(info.url) ? '' : `KB_URL=${info.url} `;
  return [
    `export ${url}KB_API_KEY=${info.firstStartKey ? '<the key above>' : '<your key>'}`,
    './dev.sh kb crawl https://your.site/docs/ --wait',
    './dev.sh kb search "a question your docs answer"',
  ];
}
