/** The published "easy seed" of the FlappyGo study: the world every bench game plays. */
export const EASY_SEED = 6977347407732442987n;
