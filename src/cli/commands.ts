import { version } from './version.js';

const USAGE = `smppd — SMPP v3.4 client and bridge daemon

Usage: smppd <command> [options]

Commands:
  start --config FILE   run the daemon (bind pool; with the demo config also the simulator)
  simulate [options]    run the built-in SMSC simulator (smppd simulate --help)
  check-config --config FILE   validate and print the resolved config (secrets masked)
  send [options]        send one test message through a running daemon (smppd send --help)
  route NUMBER [--config FILE]   the route and upstream a send of NUMBER would take now
                        (smppd route --help)
  status [--json]       what a running daemon is doing: upstreams, binds, queues (admin API)
  upstream suspend|resume NAME   stop or restart sending to an upstream (admin API)
  messages find --to NUMBER | show ID   what happened to a message (admin API)
  version               print the version

Run 'smppd <command> --help' for a command's options.`;

/** Commands that print for a person or a script, never the daemon's log (`start`). */
const PRINTING = new Set(['check-config', 'send', 'route', 'status', 'upstream', 'messages', 'version', '--version', 'help', '--help', '-h']);

/**
 * A reader that stops early (`smppd status | head`) closes the pipe: what is left is not wanted,
 * which is no failure of the command. Not for `start`, whose standard output is its log.
 */
function endQuietlyOnClosedPipe(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    process.exit(0);
  });
}

/** Runs one command and resolves to the process exit code. */
export async function runCommand(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || PRINTING.has(command)) endQuietlyOnClosedPipe();
  switch (command) {
    case 'start':
      return (await import('./start.js')).runStart(rest);
    case 'simulate':
      return (await import('./simulate.js')).runSimulate(rest);
    case 'check-config':
      return (await import('./check-config.js')).runCheckConfig(rest);
    case 'send':
      return (await import('./send.js')).runSend(rest);
    case 'route':
      return (await import('./route.js')).runRoute(rest);
    case 'status':
      return (await import('./status.js')).runStatus(rest);
    case 'upstream':
      return (await import('./upstream.js')).runUpstream(rest);
    case 'messages':
      return (await import('./messages.js')).runMessages(rest);
    case 'version':
    case '--version':
      console.log(version());
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return command === undefined ? 1 : 0;
    default:
      console.error(`smppd: unknown command '${command}'\n\n${USAGE}`);
      return 2;
  }
}
