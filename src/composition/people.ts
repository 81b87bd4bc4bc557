/** People: users and their project roles (the admin API's users and members), and the audit log's routes. */
import { PeopleService } from '../domain/people/people.service.js';
import { PeopleRepository } from '../storage/db/repositories/people.repository.js';
import { bindRoutes } from '../http/route-module.js';
import { registerPeopleAdmin } from '../http/routes/admin/people.js';
import { registerAuditAdmin } from '../http/routes/admin/audit.js';
import type { CoreBilling, CoreInfrastructure } from './core.js';
import type { Feature } from './feature.js';

export interface PeopleParts {
  people: PeopleService;
}

export function createPeopleFeature(core: CoreInfrastructure & CoreBilling): Feature<PeopleParts> {
  const people = new PeopleService({ store: new PeopleRepository(core.database), projects: core.projects, clock: core.clock });
  return {
    services: { people },
    routes: { admin: [bindRoutes(registerPeopleAdmin, { people, audit: core.audit }), bindRoutes(registerAuditAdmin, { audit: core.audit })] },
  };
}
