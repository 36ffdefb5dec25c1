import { DomainError } from '../domain/errors.js';

// Helpers of the operations' `confirmTarget` (src/contract.ts): they read the call's raw arguments, before its
// input is parsed, so a value of the wrong type is read as no value.

/** An argument as a string, or '' when it is not one. */
export const textArg = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The target, or null when the domain answers that it does not exist (the call then answers its own 404). */
export async function unlessNotFound<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (err) {
    if (err instanceof DomainError && err.code === 'not_found') return null;
    throw err;
  }
}
