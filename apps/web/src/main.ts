import "./style.css";
import { App } from "./app.js";
import { loadConfig } from "./config.js";

async function main(): Promise<void> {
  try {
    const config = await loadConfig();
    new App(config).start();
  } catch (err) {
    const banner = document.getElementById("banner");
    if (banner) {
      banner.textContent = `FlapLab cannot start: ${(err as Error).message}`;
      banner.hidden = false;
    }
    console.error(err);
  }
}

void main();
