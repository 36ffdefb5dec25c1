import type { Agent } from 'undici';
import { type HttpSender, pinnedAgent, type SendRequest, sendVia } from './httpSender.js';
import type { CheckedTarget } from '../outbound/ssrfGuard.js';

/** A keep-alive sender for the delivery worker: one pinned agent per receiver, reused across attempts. */
export interface PooledSender {
  send: HttpSender;
  /** Agents held now (at most `maxAgents`). */
  readonly size: number;
  /**
   * Closes every agent (their idle connections at once, the busy ones after their request); later sends get fresh
   * agents.
   */
  close(): Promise<void>;
}

export interface PooledSenderOptions {
  /** Agents kept at most; the least recently used one is closed when another is needed. */
  maxAgents?: number;
  /** Connections per agent (one receiver origin at one checked address). */
  connectionsPerAgent?: number;
}

/**
 * The pool key: the URL origin (scheme, host name, port: TLS verifies that host name), the checked address
 * and its family (the only address the agent's sockets connect to: a connection made for one
 * resolution is never reused for another) and the timeouts the agent enforces.
 */
export const poolKey = (target: CheckedTarget, t: SendRequest['timeouts']): string =>
  `${target.url.origin} ${target.address} ${target.family} ${t.connectMs} ${t.responseMs}`;

/**
 * A sender that keeps one keep-alive undici Agent per (origin, checked address, family, timeouts), so a
 * receiver's connection serves the next attempt instead of a TCP (and TLS) handshake each time. Every
 * attempt still resolves and checks the URL first (attemptDelivery); only an agent pinned to the address
 * just checked is used. Bounded: at most `maxAgents` agents (LRU; the evicted one is closed), each with at
 * most `connectionsPerAgent` connections that close after 4 s idle.
 */
export function createPooledSender(o: PooledSenderOptions = {}): PooledSender {
  const maxAgents = o.maxAgents ?? 64;
  const connections = o.connectionsPerAgent ?? 16;
  const agents = new Map<string, Agent>();

  const agentFor = (req: SendRequest): Agent => {
    const key = poolKey(req.target, req.timeouts);
    let agent = agents.get(key);
    if (agent) {
      agents.delete(key); // most recently used last
    } else {
      agent = pinnedAgent(req.target, req.timeouts, { keepAlive: true, connections });
      if (agents.size >= maxAgents) {
        const [oldestKey, oldest] = agents.entries().next().value!;
        agents.delete(oldestKey);
        oldest.close().catch(() => undefined);
      }
    }
    agents.set(key, agent);
    return agent;
  };

  return {
    send: (req) => sendVia(agentFor(req), req),
    get size() {
      return agents.size;
    },
    async close() {
      const all = [...agents.values()];
      agents.clear();
      await Promise.all(all.map((a) => a.close().catch(() => undefined)));
    },
  };
}
