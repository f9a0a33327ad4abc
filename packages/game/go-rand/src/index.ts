export { Rand, newRand } from "./rand.js";
export { RNG_COOKED } from "./cooked.js";
