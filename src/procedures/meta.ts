// The operation metadata lives in the call contract (src/contract.ts), below the pipeline; re-exported here for
// the procedures and adapters that name it by this path.
export type { ConfirmTarget, ConfirmTargetOf, HttpMethod, ProcedureMeta } from '../contract.js';
