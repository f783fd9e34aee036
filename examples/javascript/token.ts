// Keeps an OAuth token fresh for outgoing calls.
import { Mutex } from "async-mutex";

interface Token {
  value: string;
  expiresAt: number;
}

const mutex = new Mutex();
let current: Token | undefined;

export async function getToken(): Promise<string> {
  // BUG: the mutex is held across the network call.
  const release = await mutex.acquire();
  try {
    if (!current || current.expiresAt < Date.now()) {
      const res = await fetch("https://auth.internal/token", { method: "POST" });
      current = (await res.json()) as Token;
    }
    return current.value;
  } finally {
    release();
  }
}

let inflight: Promise<Token> | undefined;

export function getTokenFixed(): Promise<Token> {
  // Correct: one shared in-flight promise, no lock across I/O.
  if (!inflight) {
    inflight = fetch("https://auth.internal/token", { method: "POST" })
      .then((r) => r.json() as Promise<Token>)
      .catch((e) => {
        inflight = undefined;
        throw e;
      });
  }
  return inflight;
}
