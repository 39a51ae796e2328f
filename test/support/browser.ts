/**
 * Debian's Chromium driven by playwright-core, for the console's browser tests and benchmark. No browser
 * download works here; `./dev.sh test` installs the `chromium` package when it is missing (as root).
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** This workplace's flags: no sandbox as root, and no background traffic Chromium would start on its own. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A headless Chromium, or an error that says how to install it (never a silent skip). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Debian's chromium is not installed (${CHROMIUM}); the console's browser tests need it. ` +
        './dev.sh test installs it when run as root (apt-get install chromium); install the package and run again.',
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}
