export { runWhatifCli, USAGE } from "./cli.js";
export { fitModel } from "./fit.js";
export { loadStudy } from "./study.js";
export { validate } from "./validate.js";
