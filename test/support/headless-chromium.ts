/**
 * Debian's Chromium (/usr/bin/chromium), driven headless by playwright-core, for tests that check
 * a page as a person sees it. No browser is downloaded: without the package those tests skip,
 * saying so (`.ci/run` installs it).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Whether the browser is installed here. */
export const chromiumAvailable = existsSync(CHROMIUM_PATH);

/** Why the browser tests did not run; printed once by a test file that skips. */
export const CHROMIUM_MISSING = `browser tests skipped: ${CHROMIUM_PATH} is missing. Install Debian's chromium package `
  + '(`apt-get install chromium`; `.ci/run` does it) to run them.';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true });
}
