// Prisma CLI configuration. The schema and migrations live at the repository root (prisma/);
// the runtime client connects through @prisma/adapter-pg and never reads this file.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: '../../prisma/schema.prisma',
  migrations: { path: '../../prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/crawler' },
});
