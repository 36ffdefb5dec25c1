import { pino, type Logger } from 'pino';
import { API_KEY_IN, AUTHORIZATION_IN } from './http/headers.js';

/**
 * The process logger. Credentials never reach it: request headers are not logged, and these paths are
 * redacted wherever an object carrying them is logged by mistake.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: [
        'authorization',
        '*.authorization',
        `headers.${AUTHORIZATION_IN}`,
        `headers["${API_KEY_IN}"]`,
        'token',
        '*.token',
        'secret',
        '*.secret',
        'password',
        '*.password',
        'cookie',
        'headers.cookie',
      ],
      censor: '[redacted]',
    },
  });
}
