/**
 * The Node.js flags `smppd start` is run with wherever this project launches it: `npm start`, the
 * systemd unit, the Docker image, the `smppd` command's shebang and the benchmark. A test holds
 * all of them to this list.
 *
 * `--max-semi-space-size=32` (MB; Node 20's default is 16): a message lives for a few hundred
 * milliseconds between accept and its receipt, which outlasts two scavenges of a 16 MB new space at
 * thousands of messages a second, so much of it was copied twice and then promoted to the old
 * generation for the mark-sweep to collect. With 32 MB it mostly dies young, and the daemon spends
 * less CPU per message. The price is up to 3 × 16 MB more memory per thread (main and the store's).
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];
