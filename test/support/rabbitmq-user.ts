/**
 * A RabbitMQ user of a test's own on the broker of SMPPD_TEST_AMQP_URL, made and removed with
 * rabbitmqctl (which must manage that broker: run as root or the rabbitmq user on its host):
 * a publisher whose connection's user differs from smppd's, so that the broker checks its
 * `user_id` property. It may write (publish) and neither configure nor read anything.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import amqplib from 'amqplib';

export interface RabbitUser {
  name: string;
  /** SMPPD_TEST_AMQP_URL with this user's name and password. */
  url: string;
  remove(): Promise<void>;
}

/** Runs rabbitmqctl; `input` goes to its stdin (a password, kept off the command line). */
function rabbitmqctl(args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('rabbitmqctl', args, { timeout: 60_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`rabbitmqctl ${args[0]} failed: ${(stderr || error.message).trim().split('\n')[0]}`));
      else resolve(stdout);
    });
    child.stdin?.end(input ?? '');
  });
}

/**
 * A new user `smppd-test-<label>-<random>` that can publish on the vhost of `brokerUrl`, or why
 * there cannot be one here (no rabbitmqctl, not allowed, another broker).
 */
export async function createRabbitUser(brokerUrl: string, label: string): Promise<RabbitUser | string> {
  const name = `smppd-test-${label}-${randomBytes(4).toString('hex')}`;
  const password = randomBytes(18).toString('base64url');
  const parsed = new URL(brokerUrl);
  const vhost = parsed.pathname.length > 1 ? decodeURIComponent(parsed.pathname.slice(1)) : '/';
  parsed.username = encodeURIComponent(name);
  parsed.password = encodeURIComponent(password);
  const remove = async (): Promise<void> => {
    await rabbitmqctl(['delete_user', name]).catch(() => {});
  };
  try {
    await rabbitmqctl(['add_user', name], `${password}\n`);
  } catch (e) {
    return (e as Error).message;
  }
  try {
    await rabbitmqctl(['set_permissions', '-p', vhost, name, '^$', '.*', '^$']);
    // The broker rabbitmqctl manages must be the one the tests use.
    const connection = await amqplib.connect(parsed.toString());
    await connection.close();
  } catch (e) {
    await remove();
    return `${(e as Error).message} (is rabbitmqctl managing the broker of SMPPD_TEST_AMQP_URL?)`;
  }
  return { name, url: parsed.toString(), remove };
}
