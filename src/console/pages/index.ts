/** The console's pages, one module a page; the console server's only way in. */
export { CANDIDATE_ACTIONS, type CandidateAction, candidateConfirmPage, candidatesPage, runCandidateAction } from "./candidates.js";
export { catalogPage } from "./catalog.js";
export { libraryPage, parseLibraryQuery } from "./library.js";
export { errorPage, loginPage } from "./login.js";
export { playbookPage, pruneResultPage } from "./playbook.js";
export { sourcesPage } from "./sources.js";
export { confirmPage, diffPage, runAction, SKILL_ACTIONS, type SkillAction, skillHref, skillPage } from "./skill.js";
