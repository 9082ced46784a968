import { Page } from "../ui/Page";

export function HousekeepingPage() {
  return (
    <Page title="Housekeeping">
      <p>Coming soon.</p>
    </Page>
  );
}
