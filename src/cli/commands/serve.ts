import { CliError, type Command, type OptionSpec, optionHelp } from '../command.js';
import { parseInteger, stringOption } from '../options.js';

/** serve's options, each declared once with its help line. */
const SERVE_OPTIONS: OptionSpec = {
  port: { type: 'string', arg: 'N', help: 'TCP port (default: a free one)' },
  host: {
    type: 'string',
    arg: 'H',
    help: 'interface to bind (default 127.0.0.1: this machine only)',
  },
};

export const serve: Command = {
  name: 'serve',
  summary: "serve bloomkit's web page (or a folder) on this machine over HTTP",
  usage: 'serve [DIR] [--port N] [--host H]',
  help: `Serves the built web page that ships with bloomkit (or the files of DIR) over HTTP until
Ctrl-C, on 127.0.0.1 unless --host says otherwise, and prints its address. Only files inside the
folder are served; only GET and HEAD are answered.

${optionHelp(SERVE_OPTIONS)}

Example:
  bloomkit serve --port 8080`,
  options: SERVE_OPTIONS,
  positionals: { min: 0, max: 1 },
  async run({ args, options, io }) {
    const { serveStatic, webPageDir } = await import('../../node/serve.js');
    const dir = args[0] ?? webPageDir();
    if (dir === null) {
      throw new CliError(
        'the web page is not built in this install (npm run build:web); name a folder to serve',
      );
    }
    const portText = stringOption(options, 'port');
    const port =
      portText === undefined ? 0 : portText === '0' ? 0 : parseInteger('--port', portText, 65535);
    let server: Awaited<ReturnType<typeof serveStatic>>;
    try {
      server = await serveStatic(dir, { port, host: stringOption(options, 'host') });
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'EADDRINUSE') throw new CliError(`port ${port} is in use`);
      if (code === 'EACCES') throw new CliError(`port ${port} needs privileges`);
      if (error instanceof RangeError) throw new CliError(`--host: ${error.message}`);
      throw error;
    }
    io.stdout.write(`serving ${dir} at ${server.url} (Ctrl-C stops)\n`);
    const signal = await new Promise<string>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    await server.close();
    io.stderr.write(`bloomkit serve: stopped (${signal})\n`);
    return 0;
  },
};
