/**
 * The features' configuration sections, each in its own file (schema, environment twins,
 * resolution), and the `Config` they make with the core's keys (config.types.ts). Adding a
 * feature's configuration is its section file and one line in CONFIG_SECTIONS; the loader
 * validates and resolves every section listed, in this order.
 */
import { agentsSection } from './agents-config.js';
import { aliasesSection } from './aliases-config.js';
import { batchesSection } from './batch-config.js';
import { budgetsSection } from './budgets-config.js';
import type { CoreConfig } from './config.types.js';
import { consoleSection } from './console-config.js';
import { decisionSection } from './decision-config.js';
import { gatewaySection } from './gateway-config.js';
import { mcpSection } from './mcp-config.js';
import { messagesSection } from './messages-config.js';
import { requestLogSection } from './request-log-config.js';
import { responsesSection } from './responses-config.js';
import { signInSection } from './sign-in-config.js';
import { storefrontSection } from './storefront-config.js';

export const CONFIG_SECTIONS = [aliasesSection, agentsSection, batchesSection, responsesSection, decisionSection, gatewaySection, storefrontSection, consoleSection, signInSection, mcpSection, messagesSection, requestLogSection, budgetsSection] as const;

type Section = (typeof CONFIG_SECTIONS)[number];

/** Each section's resolved value, under its key. */
export type SectionsConfig = { [S in Section as S['key']]: ReturnType<S['resolve']> };

/** The resolved configuration: the core's keys and every feature's section. */
export type Config = CoreConfig & SectionsConfig;
