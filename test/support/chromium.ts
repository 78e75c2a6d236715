/** The headless Chromium the browser tests launch (Debian's `chromium` package; .ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';

// without the background-networking flags Chromium's own outgoing connections fail on a closed network
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
