/**
 * bloomkit/node: the parts of bloomkit that need Node.js (files, streams, worker threads).
 */

export * from './index.js';
