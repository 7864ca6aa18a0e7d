/**
 * The API reference (`npm run docs`): the three entry points, named as users import them
 * (`bloomkit`, `bloomkit/node`, `bloomkit/redis`, from each file's `@module` tag).
 *
 * `markdownItLoader`: TypeDoc 0.28 takes a heading's text (its anchor and its line in "On This
 * Page") from the heading's plain-text tokens only, so "The classic filter: `BloomFilter`" became
 * "The classic filter: " with the anchor `#the-classic-filter`. Here each code span in a heading
 * is rewritten, after parsing, as `<code>` + its text + `</code>`: the page shows the same code
 * span, and the heading's text and anchor keep the name.
 */

/** @param {import('markdown-it').default} parser */
function codeSpansInHeadings(parser) {
  parser.core.ruler.push('bloomkit_heading_code', (state) => {
    const tokens = state.tokens;
    for (let i = 0; i + 1 < tokens.length; i++) {
      const inline = tokens[i + 1];
      if (tokens[i].type !== 'heading_open' || inline.type !== 'inline' || !inline.children) {
        continue;
      }
      inline.children = inline.children.flatMap((child) => {
        if (child.type !== 'code_inline') return [child];
        const open = new state.Token('html_inline', '', 0);
        open.content = '<code>';
        const text = new state.Token('text', '', 0);
        text.content = child.content;
        const close = new state.Token('html_inline', '', 0);
        close.content = '</code>';
        return [open, text, close];
      });
    }
  });
}

/** @type {Partial<import('typedoc').TypeDocOptions>} */
export default {
  name: 'bloomkit',
  entryPoints: ['src/index.ts', 'src/node.ts', 'src/redis.ts'],
  tsconfig: 'tsconfig.docs.json',
  out: 'docs/api',
  readme: 'README.md',
  includeVersion: true,
  excludePrivate: true,
  excludeInternal: true,
  sort: ['kind', 'instance-first', 'alphabetical-ignoring-documents'],
  validation: {
    notExported: false,
    invalidLink: true,
    notDocumented: false,
  },
  treatWarningsAsErrors: false,
  sourceLinkTemplate: 'https://github.com/bloomkit/bloomkit/blob/{gitRevision}/{path}#L{line}',
  markdownItLoader: codeSpansInHeadings,
};
