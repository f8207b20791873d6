// A kanban board whose task moves must not interleave: two moves of one task, from two tabs or
// two replicas, would otherwise each load the task, change it and save it, and one move would
// be lost. The first board locks by hand with withLock; the second declares the lock on the
// method with the decorator, its key filled from the method's parameters.
import type { HoldfastClient } from "@holdfast/client";

export interface Task {
  id: string;
  column: string;
  history: string[];
  updatedAt?: Date;
}

/** A slow store: each load and save takes a turn of the event loop, as a database would. */
export class TaskStore {
  private readonly tasks = new Map<string, Task>();

  add(task: Task): void {
    this.tasks.set(task.id, structuredClone(task));
  }

  async load(id: string): Promise<Task> {
    await new Promise((resolve) => setImmediate(resolve));
    const task = this.tasks.get(id);
    if (!task) throw new Error(`no task ${id}`);
    return structuredClone(task);
  }

  async save(task: Task): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    this.tasks.set(task.id, structuredClone(task));
  }
}

export function defineBoards(client: HoldfastClient) {
  class Board {
    constructor(private readonly store: TaskStore) {}

    async moveTask(params: { taskId: string; column: string }): Promise<Task> {
      return client.withLock(`task:${params.taskId}`, async () => {
        const task = await this.store.load(params.taskId);
        task.column = params.column;
        task.history.push(params.column);
        await this.store.save(task);
        return task;
      });
    }
  }

  class DeclaredBoard {
    constructor(private readonly store: TaskStore) {}

    /** Moves a task to another column, one move of a task at a time. */
    @client.locked("task:{taskId}")
    async moveTask(params: { taskId: string; column: string }): Promise<Task> {
      const task = await this.store.load(params.taskId);
      task.column = params.column;
      task.history.push(params.column);
      task.updatedAt = new Date();
      await this.store.save(task);
      return task;
    }
  }

  return { Board, DeclaredBoard };
}
