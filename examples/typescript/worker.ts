async function process(id: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 10));
}

export async function run(ids: number[]): Promise<void> {
  ids.forEach(async (id) => {
    await process(id); // forEach does not wait for async callbacks
  });
}
