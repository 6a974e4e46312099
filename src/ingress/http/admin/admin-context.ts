/** What the admin routes (everything under /admin) are given: the daemon's objects, as narrow interfaces. */
import type { AdminStatus } from '../../../dispatch/admin-status.js';
import type { MessageSearch } from '../../../store/message-search.js';
import type { UpstreamSuspension } from '../../../store/upstream-suspensions.js';
import type { AdminAuth } from './admin-auth.js';

export interface AdminHttpDeps {
  /** Who may call (admin.tokens, sessions); built by the daemon so SIGHUP can replace its tokens. */
  auth: AdminAuth;
  /** GET /admin/status: one reading of everything (`readAdminStatus`). */
  status(): Promise<AdminStatus>;
  /** Suspends an upstream for the admin `by` (`Suspensions.suspend`); throws SmppdError UNKNOWN_UPSTREAM for a name not configured. */
  suspend(upstream: string, by: string, reason: string | null): Promise<UpstreamSuspension>;
  /** Resumes it (`Suspensions.resume`); throws SmppdError UNKNOWN_UPSTREAM for a name not configured. */
  resume(upstream: string, by: string): Promise<void>;
  /** Message search and a message's story, across clients (the store's role). */
  messages: MessageSearch;
}
