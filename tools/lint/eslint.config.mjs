// ESLint's flat config for every JavaScript and TypeScript file git tracks. scripts/lint lists
// them and runs `eslint --config tools/lint/eslint.config.mjs` from the repository's root, so the
// patterns below are relative to the root. All of it runs on Node.js as ES modules.
//   - JavaScript and TypeScript: @eslint/js recommended;
//   - TypeScript (tools/client): typescript-eslint recommendedTypeChecked on top, with the types.
//     Those come from docs/openapi.yaml (openapi-typescript), never committed: scripts/lint
//     generates them into a scratch folder with a tsconfig that extends tools/client's, and
//     names that tsconfig in CONNECTOR_LINT_TSCONFIG.
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";

const TS = ["**/*.ts", "**/*.mts", "**/*.cts"];
const tsconfig = process.env.CONNECTOR_LINT_TSCONFIG;
if (!tsconfig) {
  throw new Error("CONNECTOR_LINT_TSCONFIG is not set: run scripts/lint (it generates " +
                  "tools/client's types and the tsconfig that type-aware rules need)");
}

export default defineConfig(
  {
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
  {
    files: ["**/*.js", "**/*.mjs", "**/*.cjs", ...TS],
    extends: [js.configs.recommended],
    languageOptions: {
      sourceType: "module",
      globals: { ...globals.node },
    },
  },
  {
    files: ["**/*.cjs", "**/*.cts"],
    languageOptions: { sourceType: "commonjs" },
  },
  {
    files: TS,
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { project: [tsconfig], tsconfigRootDir: process.cwd() },
    },
  },
);
