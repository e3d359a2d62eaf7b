const app = document.getElementById("app");
if (app) {
  const heading = document.createElement("h1");
  heading.textContent = "比特严选助手";
  app.replaceChildren(heading);
}
