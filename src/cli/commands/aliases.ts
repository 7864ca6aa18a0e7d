/**
 * Other names of commands, what people coming from other tools type: alias -> command. `main`
 * (through `lazy.ts`) runs the command an alias names; `help ALIAS` shows its help.
 */
export const COMMAND_ALIASES: ReadonlyMap<string, string> = new Map([
  // DCSO bloom's verb for adding (`bloom insert FILE`).
  ['insert', 'add'],
]);
