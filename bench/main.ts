/**
 * The benchmark's entry point. With no command it runs the benchmark (`npm run bench -- …`);
 * `client`, `webhooks` and `consumer` are the processes the benchmark spawns of itself. Each
 * loads only its own modules: the load client reports its peak RSS.
 */
async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'client':
      return (await import('./src/client.js')).runBenchClient(rest);
    case 'webhooks':
      return (await import('./src/webhooks.js')).runWebhookBenchSide(rest);
    case 'consumer':
      return (await import('./src/consumer.js')).runBenchConsumer(rest);
    case undefined:
    default:
      return (await import('./src/bench.js')).runBench(argv);
  }
}

run(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : String(e));
    process.exitCode = 1;
  },
);
