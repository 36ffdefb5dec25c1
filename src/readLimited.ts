import type { Readable } from 'node:stream';

/**
 * Reads a request stream to its end, keeping at most `limit` bytes (the rest is read and dropped, so the
 * connection stays usable). `over` tells that the limit was passed. Listeners rather than `for await`: the
 * async iterator costs more than the read itself for the small bodies most requests carry. A stream that
 * fails or closes before its end rejects, as the iterator would.
 */
export function readLimited(stream: Readable, limit: number): Promise<{ bytes: Buffer; over: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      stream.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve({ bytes: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), over: size > limit });
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onClose = () => {
      cleanup();
      reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    };
    stream.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}
