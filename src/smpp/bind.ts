import type { BackoffPolicy } from '../core/backoff.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Log } from '../core/log.js';
import { RateTracker } from '../core/rate-tracker.js';
import type { ScopedWarnings } from '../core/warning-throttle.js';
import { Status, statusName } from './command-status.js';
import { ReconnectPolicy, type SessionEnd } from './reconnect.js';
import { BindRejectedError, Session, type SessionHandlers, type SessionSettings } from './session.js';
import type { DataSmPdu, DeliverSmPdu, SubmitSmPdu } from './pdu.js';
import { Pacer } from './pacer.js';
import { limitAnnouncer, roundRate, type RateControlSettings } from './rate-controller.js';
import { isUnencodable } from './wire.js';



export type BindState = 'connecting' | 'bound' | 'backoff' | 'stopping' | 'stopped' | 'failed';

export interface BindSettings extends SessionSettings {
  upstream: string;
  /** 0-based position of this bind in its upstream. */
  index: number;
  /** submit_sm per second; 0 = unpaced. */
  ratePerBind: number;
  /** Tokens this bind may save up (≥ 1). */
  burst: number;
  throttle: Omit<RateControlSettings, 'maxRate'>;
  reconnect: BackoffPolicy;
  /**
   * deliver_sm and data_sm being handled (stored) at once, at most (≥ 1): past it the SMSC is
   * answered ESME_RTHROTTLED at once, so one that sends without waiting for answers cannot pile
   * up store calls and memory.
   */
  maxPendingDeliveries: number;
}

/** What the pool hears from a bind: the session's outcomes plus readiness and state. */
export interface BindHandlers<T> extends Omit<SessionHandlers<T>, 'ready' | 'closed'> {
  /** The bind may be able to send again (bound, slot freed, socket drained, token due). */
  ready(): void;
  stateChanged(bind: Bind<T>, state: BindState, detail: string): void;
  /** A deliver_sm or data_sm was answered ESME_RTHROTTLED: `maxPendingDeliveries` were being handled. */
  deliveryThrottled(bind: Bind<T>): void;
}

export interface BindStats {
  id: string;
  upstream: string;
  state: BindState;
  outstanding: number;
  /** Window slots kept after their answer until the caller has stored it (`hold`). */
  held: number;
  window: number;
  /** The pacing rate in force (submit_sm/s), lowered to what the SMSC accepts; 0 = unpaced. */
  rate: number;
  /** The limit the SMSC was last measured at (submit_sm/s); null before its first throttle. */
  learnedLimit: number | null;
  /** submit_sm answered ESME_RTHROTTLED or ESME_RMSGQFUL. */
  throttledSubmits: number;
  tokens: number;
  submitted: number;
  /** submit_sm written in the last second. */
  sentLastSecond: number;
  /** The most submit_sm written in any 1-second window since start. */
  maxSentPerSecond: number;
  /** submit_sm written in the last 10 s and in the last 60 s. */
  sentLast10s: number;
  sentLastMinute: number;
  /** Why it is in its state (the last error, the stop's reason); '' when none. */
  detail: string;
  /** Wall ms since it is bound; null when not bound. */
  boundSince: number | null;
  /** Seconds until it connects again, while in backoff; else null. */
  backoffSecondsLeft: number | null;
  /** Throttles that started a measurement of the SMSC's limit. */
  throttleEpisodes: number;
  /** Slowed by what the SMSC accepts (measuring, paused, or paced below ratePerBind). */
  throttled: boolean;
  reconnects: number;
  lastError: string;
}

/**
 * One bind of an upstream: keeps a session up (connect, bind, reconnect with jittered backoff,
 * stop for good on bad credentials) and paces what it sends (a token bucket at the rate its
 * `RateController` finds the SMSC accepts). It holds no work of its own: the pool offers it one submit at a time.
 */
export class Bind<T> {
  readonly id: string;
  #state: BindState = 'stopped';
  #session: Session<T> | undefined;
  readonly #pacer: Pacer;
  #reconnect: ReconnectPolicy;
  #wake: TimerHandle | undefined;
  #backoffTimer: { handle: TimerHandle; fire: () => void } | undefined;
  #stopping = false;
  #submitted = 0;
  readonly #sent = new RateTracker();
  readonly #sent10s = new RateTracker(10_000, 100);
  readonly #sentMinute = new RateTracker(60_000, 1_000);
  #detail = '';
  #boundSince: number | null = null;
  /** Monotonic ms the backoff ends at, while in backoff. */
  #backoffUntil: number | undefined;
  #reconnects = 0;
  #lastError = '';
  #running: Promise<void> | undefined;
  /** deliver_sm / data_sm handed to the handler and not yet answered, across sessions (a store call outlives its link). */
  #pendingDeliveries = 0;
  /** Answered slots not yet given back (`hold`), across sessions: what they answered is not stored yet. */
  #held = 0;

  constructor(
    private readonly settings: BindSettings,
    private readonly clock: Clock,
    private readonly log: Log,
    private readonly handlers: BindHandlers<T>,
    /** What the SMSC does wrong (drops, throttling, malformed PDUs), logged once per kind per interval. */
    private readonly warnings: ScopedWarnings,
    random: () => number = Math.random,
  ) {
    this.id = `${settings.upstream}#${settings.index}`;
    const now = clock.now();
    this.#pacer = new Pacer({ ...settings.throttle, maxRate: settings.ratePerBind }, settings.burst, now,
      limitAnnouncer(log, 'bind settled on the rate the SMSC accepts'));
    this.#reconnect = new ReconnectPolicy(settings.reconnect, random);
  }

  get state(): BindState {
    return this.#state;
  }

  get outstanding(): number {
    return this.#session?.outstanding ?? 0;
  }

  get held(): number {
    return this.#held;
  }

  /**
   * True when bound with a free window slot and no socket backpressure (tokens not checked). A
   * held slot is not free: outstanding plus held never exceed the window, so what a crash leaves
   * sent and not stored (written and unanswered, or answered and held) is at most the window.
   */
  get hasCapacity(): boolean {
    return this.#canWrite && this.#session!.outstanding + this.#held < this.settings.window;
  }

  get #canWrite(): boolean {
    return this.#state === 'bound' && this.#session !== undefined && this.#session.canSubmit;
  }

  /** Keeps the slot of an answer whose outcome is not stored yet; `release` gives it back. */
  hold(): void {
    this.#held++;
  }

  /** Gives back a slot `hold` kept (its outcome is stored, or will not be). */
  release(): void {
    if (this.#held === 0) return;
    // Only a slot the window was short of is worth a pump: one per message otherwise.
    const wasFull = this.#session !== undefined && this.#session.outstanding + this.#held >= this.settings.window;
    this.#held--;
    if (wasFull) this.handlers.ready();
  }

  start(): void {
    if (this.#running) return;
    this.#stopping = false;
    this.#running = this.#run();
  }

  /**
   * Writes one submit_sm if the bind has capacity, is not paused and has a token, and `admit` (the
   * account's pacing, when the upstream has one) lets it. Returns false otherwise; when this bind's
   * pause or token was what it waited for, `ready` fires once it is over.
   */
  trySubmit(pdu: Omit<SubmitSmPdu, 'sequenceNumber'>, ctx: T, admit?: () => boolean): boolean {
    if (!this.hasCapacity) return false;
    const now = this.clock.now();
    const wait = this.#pacer.wait(now);
    if (wait > 0) {
      this.#wakeIn(wait);
      return false;
    }
    if (admit !== undefined && !admit()) return false;
    this.#pacer.take(now);
    const sent = this.#session!.submit(pdu, ctx);
    if (sent) {
      this.#submitted++;
      this.#sent.record(now);
      this.#sent10s.record(now);
      this.#sentMinute.record(now);
    }
    return sent;
  }

  /** The SMSC accepted a submit_sm of this bind. */
  onAccepted(): void {
    this.#pacer.onAccepted(this.clock.now());
  }

  /**
   * The SMSC answered ESME_RTHROTTLED or ESME_RMSGQFUL to this bind. `measure` false: the account's
   * pacing was what held the upstream back, and it measures instead; the answer is only counted.
   * True when it started a measurement.
   */
  onThrottled(measure = true): boolean {
    if (!measure) {
      this.#pacer.countThrottled();
      return false;
    }
    const now = this.clock.now();
    if (!this.#pacer.onThrottled(now)) return false;
    this.warnings.warn('throttled',
      { event: 'throttled', rate: roundRate(this.#pacer.rate(now)), pauseMs: this.settings.throttle.pauseMs },
      'SMSC throttled this bind; measuring the rate it accepts');
    const pause = this.#pacer.pauseLeft(now);
    if (pause > 0) this.#wakeIn(pause);
    return true;
  }

  /** Stops taking work, waits up to `drainMs` for outstanding responses, unbinds and closes. */
  async stop(drainMs: number): Promise<void> {
    this.#stopping = true;
    this.#wake?.cancel();
    this.#wake = undefined;
    if (this.#backoffTimer) {
      this.#backoffTimer.handle.cancel();
      this.#backoffTimer.fire();
    }
    const session = this.#session;
    if (session) {
      this.#setState('stopping', 'stop requested');
      await session.waitIdle(drainMs);
      await session.unbind(Math.min(drainMs, this.settings.responseTimeoutMs));
    }
    await this.#running;
    this.#running = undefined;
  }

  stats(): BindStats {
    const now = this.clock.now();
    return {
      id: this.id,
      upstream: this.settings.upstream,
      state: this.#state,
      outstanding: this.outstanding,
      held: this.#held,
      window: this.settings.window,
      rate: this.#pacer.rate(now),
      learnedLimit: this.#pacer.limit ?? null,
      throttledSubmits: this.#pacer.throttled,
      tokens: this.#pacer.tokens(now),
      submitted: this.#submitted,
      sentLastSecond: this.#sent.current(now),
      maxSentPerSecond: this.#sent.max,
      sentLast10s: this.#sent10s.current(now),
      sentLastMinute: this.#sentMinute.current(now),
      detail: this.#state === 'bound' ? '' : this.#detail,
      boundSince: this.#state === 'bound' ? this.#boundSince : null,
      backoffSecondsLeft: this.#state === 'backoff' && this.#backoffUntil !== undefined ? Math.max(0, (this.#backoffUntil - now) / 1000) : null,
      throttleEpisodes: this.#pacer.episodes,
      throttled: this.#pacer.isSlowed(now),
      reconnects: this.#reconnects,
      lastError: this.#lastError,
    };
  }

  #wakeIn(ms: number): void {
    if (this.#wake) return;
    this.#wake = this.clock.setTimer(ms, () => {
      this.#wake = undefined;
      this.handlers.ready();
    });
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      this.#setState('connecting', `connecting to ${this.settings.connect.host}:${this.settings.connect.port}`);
      const end = await this.#runSession();
      if (this.#stopping) break;
      const decision = this.#reconnect.next(end);
      const why = describeEnd(end);
      this.#lastError = why;
      if (decision.action === 'stop') {
        this.#setState('failed', why);
        this.log.error({ event: 'bind_stopped', reason: why }, 'bind stopped for good; fix the configuration and restart');
        return;
      }
      // Once per interval: an SMSC that drops every session, or a long outage, is not a line per attempt.
      this.warnings.warn('bind_down', { event: 'bind_down', reason: why, retryInMs: decision.delayMs }, 'bind down; reconnecting after backoff');
      this.#setState('backoff', why);
      this.#reconnects++;
      this.#backoffUntil = this.clock.now() + decision.delayMs;
      await new Promise<void>((resolve) => {
        const handle = this.clock.setTimer(decision.delayMs, resolve);
        this.#backoffTimer = { handle, fire: resolve };
      });
      this.#backoffTimer = undefined;
    }
    this.#setState('stopped', 'stopped');
  }

  async #runSession(): Promise<SessionEnd> {
    let closed!: (reason: string) => void;
    const closedPromise = new Promise<string>((resolve) => { closed = resolve; });
    try {
      const h = this.handlers;
      this.#session = await Session.open<T>(this.settings, this.clock, {
        response: (ctx, r) => h.response(ctx, r),
        uncertain: (ctx, cause) => h.uncertain(ctx, cause),
        late: (ctx, r) => h.late(ctx, r),
        lateExpired: (ctx) => h.lateExpired(ctx),
        deliver: (pdu) => this.#deliver(pdu),
        ready: () => h.ready(),
        closed: (reason) => closed(reason),
      }, this.warnings);
    } catch (e) {
      this.#session = undefined;
      if (e instanceof BindRejectedError) return { kind: 'bind_rejected', commandStatus: e.commandStatus };
      if (isUnencodable(e)) return { kind: 'bind_unencodable', error: e.message };
      return { kind: 'connect_failed', error: (e as Error).message };
    }
    if (this.#stopping) {
      await this.#session.unbind(this.settings.responseTimeoutMs);
      this.#session = undefined;
      return { kind: 'stopped' };
    }
    this.#reconnect.onBound();
    this.#setState('bound', 'bound');
    this.warnings.info('bound', { event: 'bound', mode: this.settings.bindMode }, 'bind up');
    this.handlers.ready();
    const reason = await closedPromise;
    this.#session = undefined;
    return this.#stopping ? { kind: 'stopped' } : { kind: 'closed', reason };
  }

  /**
   * Hands a deliver_sm or data_sm on, unless `maxPendingDeliveries` are being handled already:
   * then it is answered ESME_RTHROTTLED, which tells the SMSC to deliver it again later (SMPP v3.4
   * §5.1.3). Nothing is lost: nothing was taken.
   */
  async #deliver(pdu: DeliverSmPdu | DataSmPdu): Promise<number> {
    const max = this.settings.maxPendingDeliveries;
    if (this.#pendingDeliveries >= max) {
      this.handlers.deliveryThrottled(this);
      this.warnings.warn('deliveries_throttled', { event: 'deliveries_throttled', pending: this.#pendingDeliveries, maxPendingDeliveries: max },
        'SMSC sends deliver_sm faster than they are stored (maxPendingDeliveries being handled): answered ESME_RTHROTTLED');
      return Status.RTHROTTLED;
    }
    this.#pendingDeliveries++;
    try {
      return await this.handlers.deliver(pdu);
    } finally {
      this.#pendingDeliveries--;
    }
  }

  #setState(state: BindState, detail: string): void {
    if (this.#state === state) return;
    this.#state = state;
    this.#detail = detail;
    if (state === 'bound') this.#boundSince = this.clock.wallNow();
    this.handlers.stateChanged(this, state, detail);
  }
}

function describeEnd(end: SessionEnd): string {
  switch (end.kind) {
    case 'bind_rejected': return `bind rejected: ${statusName(end.commandStatus)}`;
    case 'connect_failed': return `connect failed: ${end.error}`;
    case 'bind_unencodable': return `bind settings do not fit a bind PDU: ${end.error}`;
    case 'closed': return end.reason;
    case 'stopped': return 'stopped';
  }
}
