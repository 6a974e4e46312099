import { EventEmitter } from 'node:events';
import { fullJitterDelay } from '../core/backoff.js';
import type { Clock } from '../core/clock.js';
import { EarliestTimer } from '../core/earliest-timer.js';
import { ErrorCode, SmppdError } from '../core/errors.js';
import type { Log } from '../core/log.js';
import type { ScopedWarnings, WarningThrottle } from '../core/warning-throttle.js';
import { AccountPace, type AccountPaceStats } from './account-pace.js';
import { Bind, type BindState, type BindStats } from './bind.js';
import { classify, THROTTLE_ERRORS } from './command-status.js';
import type { EngineMetrics } from './engine-metrics.js';
import { JobQueue } from './job-queue.js';
import type { AcceptedOutcome, MessageOutcome, PartOutcome, StorePart, SubmitPart } from './part-outcome.js';
import { limitAnnouncer } from './rate-controller.js';
import type { SubmitResponse } from './session.js';
import { holdUntilStored, notSent, uncertainWhy, type Ctx, type Job } from './upstream-job.js';
import type { DeliverHandler, UpstreamSettings } from './upstream-settings.js';

export type { DeliverHandler, UncertainPolicy, UpstreamSettings } from './upstream-settings.js';

/**
 * The binds of one upstream and the queue in front of them. Each message is a job whose parts
 * go out one after another (a part is sent once the previous one is accepted), so retried parts
 * never overtake each other; many messages are in flight at once across the binds. A submit goes
 * to the bound bind with the fewest outstanding requests that has a free slot and a token. Work
 * never belongs to a bind, so one bind going down never stalls the rest.
 *
 * Emits 'drain' when the queue drops below `maxQueued` after reaching it.
 */
export class UpstreamPool extends EventEmitter {
  readonly name: string;
  readonly #binds: Bind<Ctx>[];
  readonly #queue = new JobQueue<Job>();
  readonly #warnings: ScopedWarnings;
  /** Releases the delayed retries when they are due. */
  readonly #delayTimer: EarliestTimer;
  /** `accountRate`'s pacing, shared by the binds; undefined without one. */
  readonly #account: AccountPace | undefined;
  #pumping = false;
  #pumpAgain = false;
  #stopping = false;
  #full = false;
  /** No message is started (`suspend`). */
  #suspended = false;

  constructor(
    private readonly settings: UpstreamSettings,
    private readonly clock: Clock,
    private readonly log: Log,
    private readonly metrics: EngineMetrics,
    deliver: DeliverHandler,
    /** What the SMSC does wrong, once per kind (per bind) per interval. The caller closes it. */
    warnings: WarningThrottle,
    onBindState: (bind: string, state: BindState, detail: string) => void = () => {},
  ) {
    super();
    this.name = settings.name;
    this.#warnings = warnings.scoped(log, settings.name);
    this.#delayTimer = new EarliestTimer(clock, (now) => {
      const next = this.#queue.release(now);
      this.#pump();
      return next;
    });
    const throttle = settings.accountRate > 0 ? settings.binds[0]?.throttle : undefined;
    this.#account = throttle && new AccountPace(settings.accountRate, throttle, clock, limitAnnouncer(log, 'account settled on the rate the SMSC accepts'), () => this.#pump());
    this.#binds = settings.binds.map((b) => {
      const id = `${b.upstream}#${b.index}`;
      const bindLog = log.child({ bind: id });
      return new Bind<Ctx>(b, clock, bindLog, {
        response: (ctx, r) => this.#onResponse(ctx, r),
        uncertain: (ctx, cause) => this.#onUncertain(ctx, cause),
        late: (ctx, r) => this.#onLate(ctx, r),
        lateExpired: (ctx) => this.#onLateExpired(ctx),
        deliver: (pdu) => deliver(this.name, id, pdu),
        ready: () => this.#pump(),
        stateChanged: (bind, state, detail) => {
          if (state === 'backoff') metrics.reconnect(this.name, bind.id);
          onBindState(bind.id, state, detail);
        },
        deliveryThrottled: () => metrics.deliveryThrottled(this.name),
      }, warnings.scoped(bindLog, id));
    });
  }

  start(): void {
    for (const b of this.#binds) b.start();
  }

  /** True while `submit` takes more work. */
  get accepting(): boolean {
    return !this.#stopping && this.#queue.size < this.settings.maxQueued;
  }

  /** Jobs waiting for a bind (ready or delayed). */
  get queued(): number {
    return this.#queue.size;
  }

  /**
   * Sends the parts of one message in order. Resolves when every part has an outcome.
   * `priorAttempts`: attempts the first part already had (sent elsewhere with no answer, before a
   * failover); they count toward `maxAttempts` and are in its outcome's `attempts`.
   * `storePart`: the caller stores what the SMSC accepted, and each accepted part keeps its window
   * slot until it is stored, so that a crash can leave no more parts sent and not stored than the
   * windows hold. Every accepted part but the last is handed to `storePart` as it is accepted (its
   * slot is kept until the promise settles; the caller logs a failure); the last keeps its slot
   * until the caller calls the outcome's `release`, once it has stored the message's outcome.
   */
  submit(parts: SubmitPart[], priorAttempts = 0, storePart?: StorePart): Promise<MessageOutcome> {
    if (this.#stopping) return Promise.reject(new SmppdError(ErrorCode.POOL_STOPPED, `upstream ${this.name} is stopping`));
    if (this.#queue.size >= this.settings.maxQueued) {
      this.#full = true;
      return Promise.reject(new SmppdError(ErrorCode.POOL_FULL, `upstream ${this.name} has ${this.#queue.size} messages queued`));
    }
    return new Promise((resolve) => {
      const job: Job = {
        ticket: 0, parts, outcomes: [], index: 0, attempts: priorAttempts, attempt: 0,
        inFlight: false, awaitingLate: false, done: false, storePart, heldOn: undefined, resolve,
      };
      if (parts.length === 0) return this.#finish(job);
      if (this.#suspended) return this.#withdraw(job);
      this.#queue.pushBack(job);
      if (this.#queue.size >= this.settings.maxQueued) this.#full = true;
      this.#pump();
    });
  }

  /** Stops taking work; queued parts come back 'unsent'; outstanding ones get up to `drainMs`. */
  async stop(drainMs: number): Promise<void> {
    this.#stopping = true;
    this.#delayTimer.cancel();
    this.#account?.stop();
    for (const job of this.#queue.drainAll()) this.#finishRest(job, { kind: 'unsent', reason: 'stopped' });
    await Promise.all(this.#binds.map((b) => b.stop(drainMs)));
  }

  stats(): BindStats[] {
    return this.#binds.map((b) => b.stats());
  }

  /** The account's pacing (`accountRate`); undefined without one. */
  accountStats(): AccountPaceStats | undefined {
    return this.#account?.stats();
  }

  /** Divides `accountRate` among `instances` running instances (each gets an equal share). */
  setInstances(instances: number): void {
    this.#account?.setInstances(instances);
  }

  /**
   * Gives back the queued messages none of whose parts the SMSC has accepted yet, each part
   * 'withdrawn', so that they can go through another upstream (all of a message's parts go through
   * one). A message with a part accepted stays. Returns how many were given back.
   */
  withdrawUnstarted(): number {
    let n = 0;
    for (const job of this.#queue.queued()) {
      if (job.index !== 0 || job.inFlight || job.awaitingLate) continue;
      this.#withdraw(job);
      n++;
    }
    if (n > 0) this.#pump();
    return n;
  }

  /**
   * Suspended (an operator's): no message is started, so those waiting with no part accepted, those
   * handed over later and those back at their first part (a retry) are given back ('withdrawn');
   * messages with a part accepted go on to their end, and the binds stay up.
   */
  suspend(suspended: boolean): void {
    this.#suspended = suspended;
    if (suspended) this.withdrawUnstarted();
    else this.#pump();
  }

  /** Gives back a message none of whose parts was accepted. */
  #withdraw(job: Job): void {
    job.outcomes[0] = { kind: 'unsent', reason: 'withdrawn', attempts: job.attempts };
    this.#finishRest(job, { kind: 'unsent', reason: 'withdrawn' });
  }

  // --- sending ---------------------------------------------------------------------------------

  #pump(): void {
    if (this.#pumping) {
      this.#pumpAgain = true;
      return;
    }
    this.#pumping = true;
    try {
      do {
        this.#pumpAgain = false;
        this.#sendReady();
      } while (this.#pumpAgain);
    } finally {
      this.#pumping = false;
    }
    if (this.#full && this.accepting) {
      this.#full = false;
      this.emit('drain');
    }
  }

  #sendReady(): void {
    const candidates = this.#binds.filter((b) => b.hasCapacity);
    while (candidates.length > 0) {
      const job = this.#queue.peek();
      if (!job) return;
      if (this.#suspended && job.index === 0) {
        this.#withdraw(job);
        continue;
      }
      // Least outstanding first.
      let best = 0;
      for (let i = 1; i < candidates.length; i++) {
        if (candidates[i]!.outstanding < candidates[best]!.outstanding) best = i;
      }
      const bind = candidates[best]!;
      const sent = this.#trySend(job, bind);
      if (sent === undefined) continue;
      if (!sent || !bind.hasCapacity) candidates.splice(best, 1);
    }
  }

  /**
   * Writes the message's current part on `bind`. True once written (it leaves the queue), false
   * when the bind cannot take it now, undefined when sending threw (the message is finished).
   */
  #trySend(job: Job, bind: Bind<Ctx>): boolean | undefined {
    job.attempt++;
    const ctx: Ctx = { job, attempt: job.attempt, part: job.index, bind };
    let sent: boolean;
    try {
      sent = bind.trySubmit(job.parts[job.index]!, ctx, this.#account?.admit);
    } catch (e) {
      this.#queue.withdraw(job);
      job.outcomes[job.index] = notSent(e, bind.id, this.#warnings);
      this.#finishRest(job, { kind: 'unsent', reason: 'earlier_part_failed' });
      return undefined;
    }
    if (!sent) {
      job.attempt--;
      return false;
    }
    this.#queue.withdraw(job);
    job.inFlight = true;
    return true;
  }

  // --- outcomes --------------------------------------------------------------------------------

  #onResponse(ctx: Ctx, r: SubmitResponse): void {
    const { job } = ctx;
    const status = classify(this.settings.statusTable, r.commandStatus);
    this.metrics.response(this.name, status.name, r.latencyMs);
    if (ctx.attempt !== job.attempt || job.done) {
      if (status.class === 'ok') this.metrics.duplicate(this.name);
      return;
    }
    job.inFlight = false;
    job.awaitingLate = false;
    this.#apply(job, ctx, r, status.class, status.name);
  }

  #apply(job: Job, ctx: Ctx, r: SubmitResponse, cls: string, name: string): void {
    switch (cls) {
      case 'ok': {
        ctx.bind.onAccepted();
        this.#account?.onAccepted();
        const outcome: AcceptedOutcome = { kind: 'accepted', messageId: r.messageId, attempts: job.attempts + 1, bind: ctx.bind.id, latencyMs: r.latencyMs };
        job.outcomes[job.index] = outcome;
        holdUntilStored(job, ctx.bind, outcome);
        return this.#advance(job);
      }
      case 'reject':
        job.outcomes[job.index] = { kind: 'rejected', commandStatus: r.commandStatus, statusName: name, attempts: job.attempts + 1 };
        return this.#finishRest(job, { kind: 'unsent', reason: 'earlier_part_failed' });
      case 'retry':
        if (THROTTLE_ERRORS.has(r.commandStatus)) {
          // The SMSC is asking us to slow down, not saying the message is bad: no attempt is used.
          this.#throttled(ctx.bind);
          this.metrics.retry(this.name, name);
          return this.#requeue(job, 0);
        }
        return this.#retryOrFail(job, r.commandStatus, name);
      default:
        // 'fail': the bind is at fault (e.g. ESME_RINVBNDSTS); the part goes to another attempt.
        // A bind that refuses every part would otherwise write one line per message.
        this.#warnings.warn(`bind_error_status ${ctx.bind.id} ${name}`, { event: 'bind_error_status', bind: ctx.bind.id, status: name },
          'submit_sm refused for a bind-level reason; retrying the part');
        return this.#retryOrFail(job, r.commandStatus, name);
    }
  }

  /** A throttle answer is the account's to measure when the upstream has one, else the bind's. */
  #throttled(bind: Bind<Ctx>): void {
    if (this.#account === undefined) {
      if (bind.onThrottled()) this.metrics.throttled(this.name, bind.id);
    } else if (this.#account.throttled(bind)) this.metrics.throttled(this.name, 'account');
  }

  #retryOrFail(job: Job, commandStatus: number, name: string): void {
    job.attempts++;
    if (job.attempts >= this.settings.maxAttempts) {
      job.outcomes[job.index] = { kind: 'failed', commandStatus, statusName: name, attempts: job.attempts };
      return this.#finishRest(job, { kind: 'unsent', reason: 'earlier_part_failed' });
    }
    this.metrics.retry(this.name, name);
    this.#requeue(job, fullJitterDelay(this.settings.retryBackoff, job.attempts - 1, Math.random()));
  }

  #onUncertain(ctx: Ctx, cause: 'timeout' | 'connection_lost'): void {
    const { job } = ctx;
    this.metrics.uncertain(this.name, cause);
    if (ctx.attempt !== job.attempt || job.done) return;
    job.inFlight = false;
    job.attempts++;
    const resend = this.settings.onUncertain === 'resend' && !this.#stopping && job.attempts < this.settings.maxAttempts;
    if (resend) {
      this.log.debug({ event: 'uncertain_resend', cause, part: job.index }, 'resending a part with an uncertain outcome');
      return this.#requeue(job, 0);
    }
    if (cause === 'timeout' && !this.#stopping) {
      job.awaitingLate = true; // a late submit_sm_resp may still settle it
      return;
    }
    job.outcomes[job.index] = { kind: 'uncertain', cause, attempts: job.attempts, why: uncertainWhy(job, this.settings) };
    this.#finishRest(job, { kind: 'unsent', reason: 'earlier_part_failed' });
  }

  #onLate(ctx: Ctx, r: SubmitResponse): void {
    const { job } = ctx;
    this.metrics.lateResponse(this.name);
    this.#warnings.warn(`late_response ${ctx.bind.id}`, {
      event: 'late_response', bind: ctx.bind.id, commandStatus: r.commandStatus, latencyMs: Math.round(r.latencyMs),
    }, 'submit_sm_resp after the response timeout (responseTimeoutSeconds)');
    if (job.done || job.index !== ctx.part) {
      if (r.commandStatus === 0) this.metrics.duplicate(this.name);
      return;
    }
    const status = classify(this.settings.statusTable, r.commandStatus);
    if (!job.awaitingLate && status.class !== 'ok' && status.class !== 'reject') return; // the resend will decide
    if (job.inFlight) job.attempt++; // the resend in flight is now a duplicate
    this.#queue.withdraw(job);
    job.inFlight = false;
    job.awaitingLate = false;
    job.attempts--; // the uncertain attempt turned out to be answered
    this.#apply(job, ctx, r, status.class, status.name);
  }

  #onLateExpired(ctx: Ctx): void {
    const { job } = ctx;
    if (!job.awaitingLate || ctx.attempt !== job.attempt || job.done) return;
    job.awaitingLate = false;
    job.outcomes[job.index] = { kind: 'uncertain', cause: 'timeout', attempts: job.attempts, why: uncertainWhy(job, this.settings) };
    this.#finishRest(job, { kind: 'unsent', reason: 'earlier_part_failed' });
  }

  #advance(job: Job): void {
    job.index++;
    job.attempts = 0;
    if (job.index >= job.parts.length) return this.#finish(job);
    if (this.#stopping) return this.#finishRest(job, { kind: 'unsent', reason: 'stopped' });
    this.#queue.pushFront(job);
    this.#pump();
  }

  #requeue(job: Job, delayMs: number): void {
    if (this.#stopping) return this.#finishRest(job, { kind: 'unsent', reason: 'stopped' });
    if (delayMs <= 0) {
      this.#queue.pushFront(job);
      this.#pump();
      return;
    }
    const at = this.clock.now() + delayMs;
    this.#queue.pushDelayed(job, at);
    this.#delayTimer.arm(at);
  }

  /** Gives every part from the current one on the same outcome, then finishes. */
  #finishRest(job: Job, outcome: PartOutcome & { kind: 'unsent' }): void {
    for (let i = job.index; i < job.parts.length; i++) job.outcomes[i] ??= outcome;
    this.#finish(job);
  }

  #finish(job: Job): void {
    if (job.done) return;
    job.done = true;
    this.#queue.withdraw(job);
    job.resolve({
      parts: job.outcomes,
      release: () => {
        job.heldOn?.release();
        job.heldOn = undefined;
      },
    });
  }
}
