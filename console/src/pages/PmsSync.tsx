import { Page } from "../ui/Page";

export function PmsSyncPage() {
  return (
    <Page title="PMS sync">
      <p>Coming soon.</p>
    </Page>
  );
}
