/**
 * The job kinds and periodic tasks every worker of this service runs. One line per kind: a new kind
 * (e.g. the crawler's `crawl`) registers its handler here.
 */
import { CRAWL_JOB_KIND, CRAWL_MAX_ATTEMPTS, crawlJobHandler } from '../crawler/runner.ts';
import { registerJobHandler, registerPeriodicTask } from './registry.ts';
import { runSyncJob, SYNC_JOB_KIND, SYNC_MAX_ATTEMPTS, syncScheduleTask } from './sync-job.ts';

registerJobHandler(SYNC_JOB_KIND, runSyncJob, { maxAttempts: SYNC_MAX_ATTEMPTS });
registerPeriodicTask(syncScheduleTask);
registerJobHandler(CRAWL_JOB_KIND, crawlJobHandler, { maxAttempts: CRAWL_MAX_ATTEMPTS });
