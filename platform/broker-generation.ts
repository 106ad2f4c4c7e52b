// The local in-memory broker (scripts/kafka-mock) creates an empty topic
// `meterline.generation.<ms>.<pid>` at each start: a new name means the broker came back empty,
// its offsets start again at 0 and committed offsets are gone. Every process that produces to it
// or consumes from it watches the name (a durable Kafka has no such topic: nothing happens).
import type { Admin, Kafka } from 'kafkajs'

export const GENERATION_TOPIC = 'meterline.generation.'

export interface GenerationWatch {
  /** the generation seen last (undefined until the broker answered once) */
  readonly current: string | undefined
  /**
   * Resolves once the broker answered (or the watch stopped). A restart is seen only as a change
   * from a known generation: what reads or sends before this would belong to no generation.
   */
  readonly ready: Promise<void>
  /** reads the generation now: null for a broker without one (a durable Kafka), undefined when it does not answer */
  read(): Promise<string | null | undefined>
  stop(): Promise<void>
}

export function watchBrokerGeneration(kafka: Kafka, onRestart: (generation: string) => void, everyMs = 500): GenerationWatch {
  let stopped = false
  let current: string | undefined
  let admin: Admin | undefined
  let known!: () => void
  const ready = new Promise<void>((resolve) => (known = resolve))
  const read = async (): Promise<string | null | undefined> => {
    // Stopped: no new connection (one opened after stop would keep the process alive).
    if (stopped) return undefined
    try {
      admin ??= kafka.admin({ retry: { retries: 0 } })
      await admin.connect()
      if (stopped) {
        await admin.disconnect().catch(() => undefined)
        return undefined
      }
      return (await admin.listTopics()).find((t) => t.startsWith(GENERATION_TOPIC)) ?? null
    } catch {
      return undefined
    }
  }
  const loop = (async () => {
    while (!stopped) {
      const generation = await read()
      if (generation && current && generation !== current && !stopped) onRestart(generation)
      if (generation !== undefined) {
        if (generation) current = generation
        known()
      }
      await new Promise((r) => setTimeout(r, everyMs))
    }
    known()
  })()
  return {
    get current() {
      return current
    },
    ready,
    read,
    async stop() {
      stopped = true
      await loop
      await admin?.disconnect().catch(() => undefined)
    },
  }
}
