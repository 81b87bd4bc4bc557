/**
 * Route modules never configure a scope they did not create: no file under
 * src/http/routes/ calls addHook, setErrorHandler, decorate* or addContentTypeParser on
 * anything but a child scope it made itself (a function it passes to `register`). What a
 * scope does around its routes is declared in its policy (src/http/scopes/).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ROUTES = path.join(ROOT, 'src/http/routes');

const configures = (method: string) => method === 'addHook' || method === 'setErrorHandler' || method === 'addContentTypeParser' || method.startsWith('decorate');

const isFunction = (node: ts.Node): node is ts.FunctionLikeDeclaration =>
  ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) || ts.isMethodDeclaration(node);

/** The functions a file registers as child scopes: `x.register(<function>)` or `x.register(<name of a function>)`. */
function childScopes(source: ts.SourceFile): Set<ts.Node> {
  const registered = new Set<ts.Node>();
  const names = new Set<string>();
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'register') {
      const plugin = node.arguments[0];
      if (plugin && isFunction(plugin)) registered.add(plugin);
      if (plugin && ts.isIdentifier(plugin)) names.add(plugin.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  const named = (node: ts.Node) => {
    if (ts.isFunctionDeclaration(node) && node.name && names.has(node.name.text)) registered.add(node);
    ts.forEachChild(node, named);
  };
  named(source);
  return registered;
}

/** The function whose parameter `name` is, seen from `node`. */
function declaringFunction(node: ts.Node, name: string): ts.FunctionLikeDeclaration | null {
  for (let at: ts.Node | undefined = node.parent; at; at = at.parent) {
    if (isFunction(at) && at.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === name)) return at;
  }
  return null;
}

/** `file:line method on receiver` for every call that configures a scope the file did not create. */
export function scopeConfigurations(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const children = childScopes(source);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && configures(node.expression.name.text)) {
      const receiver = node.expression.expression;
      const owner = ts.isIdentifier(receiver) ? declaringFunction(node, receiver.text) : null;
      if (!owner || !children.has(owner)) {
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        found.push(`${file}:${line} ${node.expression.name.text} on ${receiver.getText()}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function routeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return routeFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('route modules and the scopes they are mounted in', () => {
  it('no file under src/http/routes configures a scope it did not create', () => {
    const files = routeFiles(ROUTES);
    expect(files.length).toBeGreaterThan(10);
    const found = files.flatMap((file) => scopeConfigurations(path.relative(ROOT, file), readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });

  it('reports a hook, an error handler, a decorator or a parser added to the scope a module is given', () => {
    const planted = [
      "export function registerProbe(scope: FastifyInstance): void {",
      "  scope.addHook('onRequest', (_request, _reply, done) => done());",
      '  scope.setErrorHandler(() => {});',
      "  scope.decorateRequest('probe', null);",
      "  scope.addContentTypeParser('text/plain', (_r, _p, done) => done(null));",
      '}',
    ].join('\n');
    expect(scopeConfigurations('probe.ts', planted)).toEqual([
      'probe.ts:2 addHook on scope',
      'probe.ts:3 setErrorHandler on scope',
      'probe.ts:4 decorateRequest on scope',
      'probe.ts:5 addContentTypeParser on scope',
    ]);
  });

  it('lets a module configure a child scope it registers, inline or by name', () => {
    const planted = [
      'export function registerProbe(scope: FastifyInstance): void {',
      "  scope.register(async (child) => { child.addHook('onSend', (_q, _r, p, done) => done(null, p)); });",
      '  scope.register(probeScope, {});',
      '}',
      "async function probeScope(child: FastifyInstance): Promise<void> { child.addContentTypeParser('*', (_r, _p, done) => done(null)); }",
      "async function notRegistered(other: FastifyInstance): Promise<void> { other.addHook('onRequest', async () => {}); }",
    ].join('\n');
    expect(scopeConfigurations('probe.ts', planted)).toEqual(['probe.ts:6 addHook on other']);
  });
});
