// The request context and response state live in the call contract (src/contract.ts), below the pipeline;
// re-exported here for the procedures and adapters that name them by this path.
export type {
  BalanceState,
  FileDownload,
  RateState,
  RequestContext,
  ResponseState,
  ToolContentBlock,
} from '../contract.js';
export { newResponseState } from '../contract.js';
