/**
 * `node --import ./test/support/ts-register.mjs --import ./test/support/inject-fault.ts …`: a fault
 * as a bug would make one, with no hook in smppd. On SIGUSR2 it throws outside any handler
 * (SMPPD_TEST_FAULT=throw, the default) or leaves a promise rejected with nothing to handle it
 * (SMPPD_TEST_FAULT=reject).
 */
process.on('SIGUSR2', () => {
  if (process.env.SMPPD_TEST_FAULT === 'reject') {
    setImmediate(() => { void Promise.reject(new Error('injected rejection')); });
  } else {
    setImmediate(() => { throw new Error('injected fault'); });
  }
});
