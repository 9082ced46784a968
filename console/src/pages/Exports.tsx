import { Page } from "../ui/Page";

export function ExportsPage() {
  return (
    <Page title="Exports">
      <p>Coming soon.</p>
    </Page>
  );
}
